import sys, boto3, botocore.config as bc
if len(sys.argv) < 2:
    sys.exit("usage: repro_*.py ENDPOINT_URL (the endpoint you started; no default port)")
EP = sys.argv[1]
sqs = boto3.client("sqs", endpoint_url=EP, region_name="us-east-1", aws_access_key_id="test",
                   aws_secret_access_key="test", config=bc.Config(retries={"total_max_attempts": 1}))
def call(f, **kw):
    try:
        r = f(**kw); r.pop("ResponseMetadata", None); return r
    except sqs.exceptions.ClientError as e:
        return ("ERROR", e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"].get("QueryErrorCode") or e.response["Error"]["Code"], e.response["Error"]["Message"][:150])
