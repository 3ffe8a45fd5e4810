FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY shs_platform ./shs_platform
COPY surveys ./surveys
COPY scoring ./scoring
COPY exports ./exports
COPY llm ./llm
RUN pip install ".[spss]"

COPY . .
# Static files (hashed, with the manifest DEBUG=0 needs) and translations are
# built into the image; they need no secrets. The production smoke test runs
# the same script.
RUN sh scripts/build-static

RUN useradd --create-home shs && mkdir -p /data/private && chown shs /data/private
USER shs
EXPOSE 8000
# The app is the config's: ASGI under the uvicorn workers (the default), WSGI
# when WEB_WORKER_CLASS names one of gunicorn's own (shs_platform/gunicorn_conf.py).
CMD ["gunicorn", "--bind", "0.0.0.0:8000", "--config", "python:shs_platform.gunicorn_conf"]
