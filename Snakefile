# journalbench pipeline: run experiments (campaign.smk), tidy raw logs (tidy.smk),
# execute the analysis notebooks (analysis.smk). Default target: every result.
from snakemake.utils import min_version

min_version("9.0")


configfile: "workflow/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/campaign.smk"
include: "workflow/rules/tidy.smk"
include: "workflow/rules/analysis.smk"


rule all:
    input:
        ANALYSIS_OUTPUTS,
    default_target: True
