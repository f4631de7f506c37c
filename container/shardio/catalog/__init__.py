"""What a dataset holds: the layout's keys, the manifest (its JSON read within limits) and a folder's files."""
