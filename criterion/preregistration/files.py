"""The pre-registration in the replication package (preregistration/): each
version's canonical JSON, exactly the bytes its SHA-256 was taken of, the
hash as `sha256sum -c` reads it, and an index of the versions saying which
was frozen when data collection began."""

import csv
import io

from criterion.models import PreRegistration


def preregistration_files(study, dataset, report) -> dict[str, str]:
    versions = list(PreRegistration.objects.filter(study=study).order_by("version"))
    if not versions:
        return {}
    files = {}
    index = io.StringIO()
    writer = csv.writer(index)
    writer.writerow(["version", "file", "sha256", "created", "frozen_at", "after_data_collection"])
    for version in versions:
        name = f"v{version.version}.json"
        files[f"preregistration/{name}"] = version.canonical_json()
        files[f"preregistration/v{version.version}.sha256"] = f"{version.sha256}  {name}\n"
        writer.writerow(
            [
                version.version,
                name,
                version.sha256,
                version.created_at.date().isoformat(),
                version.frozen_at.isoformat() if version.frozen_at else "",
                int(version.after_data_collection),
            ]
        )
    files["preregistration/versions.csv"] = index.getvalue()
    return files
