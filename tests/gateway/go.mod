module queen-sqs/tests/gateway

go 1.25.0

require (
	github.com/tetratelabs/wazero v1.12.0
	mosn.io/proxy-wasm-go-host v0.2.0
)

require golang.org/x/sys v0.44.0 // indirect
