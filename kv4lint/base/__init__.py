"""What every stage shares: the records that flow through the pipeline and the leaves each concept has one model in."""
