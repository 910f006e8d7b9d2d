-- wrk: POST an SQS JSON request for an action that does not exist (issue 2's figure).
wrk.method = "POST"
wrk.path = "/"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/x-amz-json-1.0"
wrk.headers["X-Amz-Target"] = "AmazonSQS.NoSuchAction"
