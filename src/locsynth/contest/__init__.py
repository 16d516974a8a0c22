"""The PWS Cup location-trace anonymization contest (paper 003 §3-5): file formats, team data,
pseudonymization, the sample and winning attacks, scores, and the judge's workflow."""
