"""Privacy attacks on synthetic traces: re-identification and membership inference."""

from .membership import MembershipInference, membership_inference
from .reidentify import Reidentification, reidentify

__all__ = ["MembershipInference", "Reidentification", "membership_inference", "reidentify"]
