"""The criterion study's sections of the replication package's R script."""

from criterion.replication.sections import SECTIONS

__all__ = ["SECTIONS"]
