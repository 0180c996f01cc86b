"""`caracal simulate`: Caracal's own code on a platform simulated by SimGrid SMPI.

platform.py writes the platform XML and the hostfile, build.py builds libcaracal and the
program with smpicc, run.py launches smpirun and measures what the host paid.
docs/simulate.md tells why each piece is the way it is.
"""
