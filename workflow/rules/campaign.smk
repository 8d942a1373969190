# Runs the experiments of a campaign on its hosts (filled in by the campaign issue).
