# Executes the analysis notebooks with papermill into results/ and figures/.
ANALYSIS_OUTPUTS = [f"data/processed/{CAMPAIGN}/runs.parquet"]
