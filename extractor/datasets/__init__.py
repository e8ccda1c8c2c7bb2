"""Tools over datasets: diff, match and the nightly job."""
