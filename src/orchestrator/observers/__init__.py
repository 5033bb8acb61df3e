"""Observers of run events: each receives events and acts on the world, none imports the runner."""
