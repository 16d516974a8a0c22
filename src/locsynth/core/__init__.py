"""The ground every other floor stands on: errors, checks, random streams, parallel
execution, progress, plugins, outputs written whole, and the Earth's geometry."""
