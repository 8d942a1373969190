# Turns complete run folders under data/raw into tidy parquet tables (filled in by the tidy issue).
