"""Judging: findings per rank, ranking cause above echo, the job's story, remedies."""
