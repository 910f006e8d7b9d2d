package main

// Where mosn.io/proxy-wasm-go-host v0.2.0 (2022) differs from the proxy-wasm ABI 0.2.1 that
// the Rust SDK (proxy-wasm 0.2.x) and Envoy speak, these registrations replace or add the
// import, written to the spec; everything else is MOSN's own ABI code (proxywasm/v1).
//
//   - proxy_get_current_time_nanoseconds: v0.2.0 writes 32 bits of an int32 into the u64
//     the module passed (a clock that wraps every 4.3 s); here, the full u64.
//   - proxy_get_buffer_bytes: v0.2.0 ignores `start` and treats the u32 max size as signed,
//     so the SDK's get_plugin_configuration (max = u32::MAX, i.e. -1) is refused as a bad
//     argument; here, start and max are unsigned and the range is clipped.
//   - proxy_send_local_response: ABI 0.2.1's name for v0.2.0's proxy_send_http_response
//     (same arguments).
//   - proxy_get_log_level, proxy_continue_stream, proxy_close_stream: ABI 0.2.1 additions.
//   - proxy_resolve_shared_queue: ABI 0.2.1 adds the VM id (5 arguments, v0.2.0 has 3); not
//     used by this plugin, answers NotFound.
//   - gRPC (proxy_grpc_call/_stream/_send/_cancel/_close) and proxy_get_status: imported by
//     the SDK's dispatch tables, never called by this plugin; ABI 0.2.1 signatures, answering
//     Unimplemented (v0.2.0's gRPC imports have the older names and arguments).

import (
	"time"

	"mosn.io/proxy-wasm-go-host/proxywasm/common"
	v1 "mosn.io/proxy-wasm-go-host/proxywasm/v1"
)

func registerFixes(inst common.WasmInstance) {
	_ = inst.RegisterFunc("env", "proxy_get_current_time_nanoseconds", proxyGetCurrentTimeNanoseconds)
	_ = inst.RegisterFunc("env", "proxy_get_buffer_bytes", proxyGetBufferBytes)
	_ = inst.RegisterFunc("env", "proxy_send_local_response", v1.ProxySendHttpResponse)
	_ = inst.RegisterFunc("env", "proxy_get_log_level", proxyGetLogLevel)
	_ = inst.RegisterFunc("env", "proxy_continue_stream", proxyContinueStream)
	_ = inst.RegisterFunc("env", "proxy_close_stream", proxyContinueStream)
	_ = inst.RegisterFunc("env", "proxy_grpc_call", func(common.WasmInstance,
		int32, int32, int32, int32, int32, int32, int32, int32, int32, int32, int32, int32) int32 {
		return v1.WasmResultUnimplemented.Int32()
	})
	_ = inst.RegisterFunc("env", "proxy_grpc_stream", func(common.WasmInstance,
		int32, int32, int32, int32, int32, int32, int32, int32, int32) int32 {
		return v1.WasmResultUnimplemented.Int32()
	})
	_ = inst.RegisterFunc("env", "proxy_grpc_send", func(common.WasmInstance, int32, int32, int32, int32) int32 {
		return v1.WasmResultUnimplemented.Int32()
	})
	unimplemented1 := func(common.WasmInstance, int32) int32 { return v1.WasmResultUnimplemented.Int32() }
	_ = inst.RegisterFunc("env", "proxy_grpc_cancel", unimplemented1)
	_ = inst.RegisterFunc("env", "proxy_grpc_close", unimplemented1)
	_ = inst.RegisterFunc("env", "proxy_resolve_shared_queue", func(common.WasmInstance,
		int32, int32, int32, int32, int32) int32 {
		return v1.WasmResultNotFound.Int32()
	})
	_ = inst.RegisterFunc("env", "proxy_get_status", func(common.WasmInstance, int32, int32, int32) int32 {
		return v1.WasmResultUnimplemented.Int32()
	})
}

func proxyGetCurrentTimeNanoseconds(instance common.WasmInstance, resultPtr int32) int32 {
	w := instance.(*wazeroInstance)
	if err := w.PutUint64(uint64(uint32(resultPtr)), uint64(time.Now().UnixNano())); err != nil {
		return v1.WasmResultInvalidMemoryAccess.Int32()
	}
	return v1.WasmResultOk.Int32()
}

func proxyGetBufferBytes(instance common.WasmInstance, bufferType, start, maxSize, retData, retSize int32) int32 {
	buf := v1.GetBuffer(instance, v1.BufferType(bufferType))
	if buf == nil {
		return v1.WasmResultNotFound.Int32()
	}
	data := buf.Bytes()
	from := uint64(uint32(start))
	if from > uint64(len(data)) {
		return v1.WasmResultBadArgument.Int32()
	}
	to := from + uint64(uint32(maxSize))
	if to > uint64(len(data)) {
		to = uint64(len(data))
	}
	chunk := data[from:to]
	var addr uint64
	if len(chunk) > 0 {
		var err error
		if addr, err = instance.Malloc(int32(len(chunk))); err != nil {
			return v1.WasmResultInvalidMemoryAccess.Int32()
		}
		if err := instance.PutMemory(addr, uint64(len(chunk)), chunk); err != nil {
			return v1.WasmResultInvalidMemoryAccess.Int32()
		}
	}
	// Nothing to give: a null pointer and a zero size (the SDK reads that as "no data").
	if instance.PutUint32(uint64(uint32(retData)), uint32(addr)) != nil ||
		instance.PutUint32(uint64(uint32(retSize)), uint32(len(chunk))) != nil {
		return v1.WasmResultInvalidMemoryAccess.Int32()
	}
	return v1.WasmResultOk.Int32()
}

func proxyGetLogLevel(instance common.WasmInstance, resultPtr int32) int32 {
	const info = 2 // trace 0, debug 1, info 2, warn 3, error 4, critical 5
	if instance.PutUint32(uint64(uint32(resultPtr)), info) != nil {
		return v1.WasmResultInvalidMemoryAccess.Int32()
	}
	return v1.WasmResultOk.Int32()
}

// The gateway answers with the filter's local response only: nothing to continue or close.
func proxyContinueStream(common.WasmInstance, int32) int32 { return v1.WasmResultOk.Int32() }
