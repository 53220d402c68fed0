"""Ranking configurations across studies (`dbscale rank`)."""
