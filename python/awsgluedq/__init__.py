"""AWS Glue Data Quality's job library (`awsgluedq`), as Glue Studio's scripts import it:
`from awsgluedq.transforms import EvaluateDataQuality`. A thin façade over
openglue_runtime.quality."""
