"""The load of the peer benchmark, the same for every platform.

N participants each load the ten-question page, submit it and load the next
page. Three kinds of round:

- burst: everyone loads the page, then all submissions are fired at once;
- paced: participants arrive within 10 s and think 1-3 s before submitting;
- sustained: 10 participants at a time, back to back, no thinking.

A platform is an object with `participants(n)` (set up outside the measured
window), `page(browser, p)`, `autosave(browser, p, sequence, item, value)`,
`submit(browser, p, answers)`, `next_page(browser, p)`, `browser(p)`,
`stored()` (rows of submitted answers), and `database` and `processes` (its
own server processes; the CPU meter counts them and their children only).
"""

import http.client
import os
import queue
import random
import statistics
import threading
import time
import urllib.parse
import urllib.request
from functools import partial

from tests.bench.procs import CpuMeter
from tests.bench.stack import Browser, _NoRedirect, percentile


def _ok(status: int) -> bool:
    return status == 200 or 300 <= status < 400


ARRIVAL_SECONDS = 10.0
SUSTAINED_AT_ONCE = 10
# The load shares the two cores with the systems it measures, so each
# request should cost it as little as it can: http.client with the cookies
# in a dict costs about a third of urllib's opener with its cookie jar
# (PEER_CLIENT=urllib brings that one back, for comparison).
CLIENT = os.environ.get("PEER_CLIENT", "http.client")


class TimedBrowser:
    """One participant's browser: its cookies, the CSRF token, and the kind,
    duration, status and start of every request (for submissions per
    second); `csrf=False` for a platform whose forms carry no CSRF token.
    Redirects are not followed: the next request is the load's."""

    def __init__(self, base: str, session_cookie: str = "", *, csrf: bool = True):
        address = urllib.parse.urlsplit(base)
        self.base, self.host, self.port = base, address.hostname, address.port
        self.cookies = {"sessionid": session_cookie} if session_cookie else {}
        self.csrf = csrf
        self.timings: list[tuple[str, float, int]] = []
        self.starts: list[float] = []
        self.urllib = _UrllibBrowser(base, session_cookie, csrf) if CLIENT == "urllib" else None

    def request(self, kind, path, data=None) -> tuple[int, bytes, str]:
        """Returns status, body and the Location header (for redirects)."""
        self.starts.append(time.perf_counter())
        if self.urllib is not None:
            answer = self.urllib.request(kind, path, data)
            self.timings.append(self.urllib.timings[-1])
            return answer
        headers, body = {}, None
        if data is not None:
            token = {"csrfmiddlewaretoken": self.cookies.get("csrftoken", "")} if self.csrf else {}
            body = urllib.parse.urlencode({**data, **token}).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        if path.startswith("http"):
            address = urllib.parse.urlsplit(path)
            path = address.path + (f"?{address.query}" if address.query else "")
        started = time.perf_counter()
        status, content, location = self._send(path, body, headers)
        self.timings.append((kind, time.perf_counter() - started, status))
        return status, content, location

    def _send(self, path, body, headers) -> tuple[int, bytes, str]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            connection.request("GET" if body is None else "POST", path, body, headers)
            response = connection.getresponse()
            content = response.read()
            for cookie in response.msg.get_all("Set-Cookie") or []:
                self._keep(cookie)
            return response.status, content, response.getheader("Location", "")
        except OSError:
            return 0, b"", ""
        finally:
            connection.close()

    def _keep(self, header: str) -> None:
        pair, _, attributes = header.partition(";")
        name, _, value = pair.partition("=")
        if "max-age=0" in attributes.lower().replace(" ", ""):
            self.cookies.pop(name.strip(), None)
        else:
            self.cookies[name.strip()] = value.strip()


class _NoRedirectAtAll(_NoRedirect):
    """Starlette (oTree) redirects with 303 and 307 too: none is followed."""

    http_error_303 = http_error_307 = _NoRedirect.http_error_302


class _UrllibBrowser(Browser):
    """The benchmarks' urllib browser (tests/bench/stack.py), redirects unfollowed."""

    def __init__(self, base: str, session_cookie: str, csrf: bool):
        super().__init__(base, session_cookie)
        handlers = [h for h in self.opener.handlers if not isinstance(h, _NoRedirect)]
        self.opener = urllib.request.build_opener(*handlers, _NoRedirectAtAll())
        self.csrf = csrf

    def _csrf(self) -> str:
        return super()._csrf() if self.csrf else ""


def _answers(rng) -> dict:
    return {f"q{i}": str(rng.choice([-2, -1, 0, 1, 2])) for i in range(1, 11)}


def _flow(platform, browser, p, answers, *, autosaves, think, barrier=None):
    platform.page(browser, p)
    pause = think / 11 if autosaves else think
    if autosaves:
        for sequence, (item, value) in enumerate(answers.items(), start=1):
            time.sleep(pause)
            platform.autosave(browser, p, sequence, item, value)
    time.sleep(pause)
    if barrier is not None:
        barrier.wait()
    platform.submit(browser, p, answers)
    platform.next_page(browser, p)


def _threads(targets) -> None:
    threads = [threading.Thread(target=target) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def burst(platform, people, browsers, rng, autosaves):
    barrier = threading.Barrier(len(people))
    _threads(
        partial(_flow, platform, b, p, _answers(rng), autosaves=autosaves, think=0.0,
                barrier=barrier)
        for b, p in zip(browsers, people, strict=True)
    )  # fmt: skip


def _arrive(platform, browser, p, answers, delay, think, autosaves):
    time.sleep(delay)
    _flow(platform, browser, p, answers, autosaves=autosaves, think=think)


def paced(platform, people, browsers, rng, autosaves):
    _threads(
        partial(_arrive, platform, b, p, _answers(rng), rng.uniform(0, ARRIVAL_SECONDS),
                rng.uniform(1, 3), autosaves)
        for b, p in zip(browsers, people, strict=True)
    )  # fmt: skip


def sustained(platform, people, browsers, rng, autosaves):
    waiting = queue.Queue()
    for browser, p in zip(browsers, people, strict=True):
        waiting.put((browser, p, _answers(rng)))

    def keep_going():
        while True:
            try:
                browser, p, answers = waiting.get_nowait()
            except queue.Empty:
                return
            _flow(platform, browser, p, answers, autosaves=autosaves, think=0.0)

    _threads([keep_going] * SUSTAINED_AT_ONCE)


ROUNDS = {"burst": burst, "paced": paced, "sustained": sustained}


def measure(platform, kind: str, n: int, seed: int, *, autosaves=False, skip=()) -> dict:
    """One round; returns its figures. `skip`: processes not to count (the load's own)."""
    people = platform.participants(n)
    browsers = [platform.browser(p) for p in people]
    stored_before = platform.stored()
    meter = CpuMeter(platform.database, platform.redis_pid, skip=skip, roots=platform.processes)
    meter.start()
    started, load = time.perf_counter(), time.process_time()
    ROUNDS[kind](platform, people, browsers, random.Random(seed), autosaves)
    elapsed, load = time.perf_counter() - started, time.process_time() - load
    time.sleep(1.0)  # what the submissions queued (scoring) is part of their cost
    cpu = meter.stop()
    timings = [t for browser in browsers for t in browser.timings]
    submits = [
        (start, seconds, status)
        for browser in browsers
        for kind_, seconds, status, start in _with_start(browser)
        if kind_ == "submit"
    ]
    figures = _figures(platform, n, stored_before, cpu, elapsed, timings, submits)
    # Not the system's: the load itself, on the same two cores (and the meter).
    figures["load generator cpu ms"] = load / n * 1000
    return figures


def _with_start(browser):
    """The browser records (kind, seconds, status) as each request ends, in order."""
    return [(*t, start) for t, start in zip(browser.timings, browser.starts, strict=True)]


def _figures(platform, n, stored_before, cpu, elapsed, timings, submits) -> dict:
    submit_ms = [seconds * 1000 for _start, seconds, _status in submits]
    first = min(start for start, _s, _st in submits)
    last = max(start + seconds for start, seconds, _st in submits)
    # A submission is accepted with a redirect to the next page.
    errors = sum(1 for _k, _t, status in timings if not _ok(status))
    errors += sum(1 for _start, _s, status in submits if not 300 <= status < 400)
    stored = platform.stored() - stored_before
    return {
        "cpu ms per participant": sum(cpu.values()) / n * 1000,
        "server cpu ms": cpu["server"] / n * 1000,
        "postgres cpu ms": cpu["postgres"] / n * 1000,
        "redis cpu ms": cpu["redis"] / n * 1000,
        "submissions per second": n / (last - first),
        "participants per second": n / elapsed,
        "submit p50 ms": statistics.median(submit_ms),
        "submit p95 ms": percentile(submit_ms, 0.95),
        "submit max ms": max(submit_ms),
        "errors": errors,
        "stored": stored,
        "lost": n - stored,
    }


def medians(rounds: list[dict]) -> dict:
    """Medians over rounds; errors and lost rows are added up, not averaged."""
    summed = ("errors", "stored", "lost")
    return {
        key: (sum if key in summed else statistics.median)(r[key] for r in rounds)
        for key in rounds[0]
    }
