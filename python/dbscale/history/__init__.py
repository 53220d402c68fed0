"""Results over days and versions (`dbscale history`): a store of immutable Parquet files, series
of points, and the changes found in them."""
