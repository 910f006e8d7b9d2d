package main

// The wazero side of MOSN's proxy-wasm host: mosn.io/proxy-wasm-go-host v0.2.0 defines the
// VM it drives as interfaces (proxywasm/common.WasmInstance) and ships only a wasmer-go
// (cgo) implementation; this is the same interface over wazero, in pure Go.

import (
	"context"
	"crypto/rand"
	"fmt"
	"log"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"mosn.io/proxy-wasm-go-host/proxywasm/common"
)

// One runtime per VM: each has its own "env" host module bound to its own instance.
// Compiled code is shared through the cache.
type wazeroModule struct {
	cache    wazero.CompilationCache
	wasm     []byte
	abiNames []string
}

func (m *wazeroModule) Init() {}

func (m *wazeroModule) GetABINameList() []string { return m.abiNames }

func (m *wazeroModule) NewInstance() common.WasmInstance {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(m.cache))
	return &wazeroInstance{ctx: ctx, rt: rt, module: m, hostFuncs: map[string]map[string]interface{}{}}
}

type wazeroInstance struct {
	ctx       context.Context
	rt        wazero.Runtime
	module    *wazeroModule
	mod       api.Module
	hostFuncs map[string]map[string]interface{}
	malloc    api.Function
	data      interface{}
	mu        sync.Mutex
}

func (w *wazeroInstance) RegisterFunc(namespace, name string, f interface{}) error {
	if w.mod != nil {
		return fmt.Errorf("register %s.%s: instance already started", namespace, name)
	}
	if w.hostFuncs[namespace] == nil {
		w.hostFuncs[namespace] = map[string]interface{}{}
	}
	w.hostFuncs[namespace][name] = f // a later registration replaces an earlier one
	return nil
}

// Start instantiates WASI preview 1 (the module's std needs it: clocks, random_get, fd_write
// for panics), the registered host functions, then the module, and runs _initialize
// (proxy_wasm::main!'s reactor entry point), as Envoy does.
func (w *wazeroInstance) Start() error {
	if _, err := wasi_snapshot_preview1.Instantiate(w.ctx, w.rt); err != nil {
		return err
	}
	for ns, funcs := range w.hostFuncs {
		b := w.rt.NewHostModuleBuilder(ns)
		for name, f := range funcs {
			params, results, fn, err := w.adapt(f)
			if err != nil {
				return fmt.Errorf("%s.%s: %w", ns, name, err)
			}
			b.NewFunctionBuilder().WithGoModuleFunction(fn, params, results).Export(name)
		}
		if _, err := b.Instantiate(w.ctx); err != nil {
			return err
		}
	}
	compiled, err := w.rt.CompileModule(w.ctx, w.module.wasm)
	if err != nil {
		return err
	}
	// Real randomness and clocks: wazero's defaults are deterministic, and request ids
	// (hence message ids) come from random_get.
	cfg := wazero.NewModuleConfig().WithName("queen-sqs").WithStartFunctions().
		WithRandSource(rand.Reader).WithSysWalltime().WithSysNanotime().WithSysNanosleep().
		WithStdout(os.Stderr).WithStderr(os.Stderr)
	w.mod, err = w.rt.InstantiateModule(w.ctx, compiled, cfg)
	if err != nil {
		return err
	}
	w.malloc = w.mod.ExportedFunction("proxy_on_memory_allocate")
	if w.malloc == nil {
		return fmt.Errorf("the module exports no proxy_on_memory_allocate")
	}
	if init := w.mod.ExportedFunction("_initialize"); init != nil {
		if _, err := init.Call(w.ctx); err != nil {
			return fmt.Errorf("_initialize: %w", err)
		}
	}
	return nil
}

// adapt turns one of MOSN's ABI functions, func(common.WasmInstance, int32...) int32, into a
// wazero host function (by reflection: the ABI package registers them untyped).
func (w *wazeroInstance) adapt(f interface{}) ([]api.ValueType, []api.ValueType, api.GoModuleFunc, error) {
	fv := reflect.ValueOf(f)
	ft := fv.Type()
	if ft.Kind() != reflect.Func || ft.NumIn() < 1 {
		return nil, nil, nil, fmt.Errorf("not an ABI function: %s", ft)
	}
	var params, results []api.ValueType
	kinds := make([]reflect.Kind, ft.NumIn()-1)
	for i := 1; i < ft.NumIn(); i++ {
		kinds[i-1] = ft.In(i).Kind()
		params = append(params, valueType(ft.In(i).Kind()))
	}
	for i := 0; i < ft.NumOut(); i++ {
		results = append(results, valueType(ft.Out(i).Kind()))
	}
	self := reflect.ValueOf(common.WasmInstance(w))
	fn := func(_ context.Context, _ api.Module, stack []uint64) {
		in := make([]reflect.Value, 0, len(kinds)+1)
		in = append(in, self)
		for i, k := range kinds {
			if k == reflect.Int64 {
				in = append(in, reflect.ValueOf(int64(stack[i])))
			} else {
				in = append(in, reflect.ValueOf(int32(uint32(stack[i]))))
			}
		}
		out := fv.Call(in)
		for i, o := range out {
			stack[i] = uint64(uint32(o.Int()))
			if o.Kind() == reflect.Int64 {
				stack[i] = uint64(o.Int())
			}
		}
	}
	return params, results, fn, nil
}

func valueType(k reflect.Kind) api.ValueType {
	if k == reflect.Int64 || k == reflect.Uint64 {
		return api.ValueTypeI64
	}
	return api.ValueTypeI32
}

func (w *wazeroInstance) Stop() { _ = w.rt.Close(w.ctx) }

type wazeroFunction struct {
	ctx context.Context
	fn  api.Function
}

// Call takes and returns int32 values, as MOSN's ABIContext expects (nil for no result).
func (f *wazeroFunction) Call(args ...interface{}) (interface{}, error) {
	raw := make([]uint64, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case int32:
			raw[i] = api.EncodeI32(v)
		case int64:
			raw[i] = api.EncodeI64(v)
		default:
			return nil, fmt.Errorf("argument %d: unsupported %T", i, a)
		}
	}
	res, err := f.fn.Call(f.ctx, raw...)
	if err != nil || len(res) == 0 {
		return nil, err
	}
	return int32(uint32(res[0])), nil
}

func (w *wazeroInstance) GetExportsFunc(name string) (common.WasmFunction, error) {
	fn := w.mod.ExportedFunction(name)
	if fn == nil {
		return nil, fmt.Errorf("the module exports no %s", name)
	}
	return &wazeroFunction{ctx: w.ctx, fn: fn}, nil
}

func (w *wazeroInstance) GetExportsMem(string) ([]byte, error) {
	buf, _ := w.mod.Memory().Read(0, w.mod.Memory().Size())
	return buf, nil
}

// GetMemory copies: MOSN's ABI functions keep some of these slices (a dispatched call's
// body) past the call, and the module's memory may move when it grows.
func (w *wazeroInstance) GetMemory(addr, size uint64) ([]byte, error) {
	if size == 0 {
		return []byte{}, nil
	}
	buf, ok := w.mod.Memory().Read(uint32(addr), uint32(size))
	if !ok {
		return nil, fmt.Errorf("read %d bytes at %d: out of range", size, addr)
	}
	return append([]byte(nil), buf...), nil
}

func (w *wazeroInstance) PutMemory(addr, size uint64, content []byte) error {
	if uint64(len(content)) > size {
		content = content[:size]
	}
	if !w.mod.Memory().Write(uint32(addr), content) {
		return fmt.Errorf("write %d bytes at %d: out of range", len(content), addr)
	}
	return nil
}

func (w *wazeroInstance) GetByte(addr uint64) (byte, error) {
	b, ok := w.mod.Memory().ReadByte(uint32(addr))
	if !ok {
		return 0, fmt.Errorf("read byte at %d: out of range", addr)
	}
	return b, nil
}

func (w *wazeroInstance) PutByte(addr uint64, b byte) error {
	if !w.mod.Memory().WriteByte(uint32(addr), b) {
		return fmt.Errorf("write byte at %d: out of range", addr)
	}
	return nil
}

func (w *wazeroInstance) GetUint32(addr uint64) (uint32, error) {
	v, ok := w.mod.Memory().ReadUint32Le(uint32(addr))
	if !ok {
		return 0, fmt.Errorf("read u32 at %d: out of range", addr)
	}
	return v, nil
}

func (w *wazeroInstance) PutUint32(addr uint64, v uint32) error {
	if !w.mod.Memory().WriteUint32Le(uint32(addr), v) {
		return fmt.Errorf("write u32 at %d: out of range", addr)
	}
	return nil
}

func (w *wazeroInstance) PutUint64(addr uint64, v uint64) error {
	if !w.mod.Memory().WriteUint64Le(uint32(addr), v) {
		return fmt.Errorf("write u64 at %d: out of range", addr)
	}
	return nil
}

// Malloc asks the module for memory (the ABI's proxy_on_memory_allocate): where host-owned
// data (header maps, buffers) is copied for the module to take.
func (w *wazeroInstance) Malloc(size int32) (uint64, error) {
	res, err := w.malloc.Call(w.ctx, api.EncodeI32(size))
	if err != nil {
		return 0, err
	}
	return uint64(uint32(res[0])), nil
}

func (w *wazeroInstance) GetData() interface{}     { return w.data }
func (w *wazeroInstance) SetData(data interface{}) { w.data = data }
func (w *wazeroInstance) Acquire() bool            { return true }
func (w *wazeroInstance) Release()                 {}
func (w *wazeroInstance) Lock(data interface{})    { w.mu.Lock(); w.data = data }
func (w *wazeroInstance) Unlock()                  { w.mu.Unlock() }
func (w *wazeroInstance) GetModule() common.WasmModule {
	return w.module
}
func (w *wazeroInstance) HandleError(err error) { log.Printf("gateway: wasm trap: %v", err) }

// abiNames lists the module's proxy_abi_version_* exports (what ABI it speaks).
func abiNames(rt wazero.Runtime, wasm []byte) ([]string, []string, error) {
	compiled, err := rt.CompileModule(context.Background(), wasm)
	if err != nil {
		return nil, nil, err
	}
	var abis, imports []string
	for name := range compiled.ExportedFunctions() {
		if strings.HasPrefix(name, "proxy_abi_version_") {
			abis = append(abis, name)
		}
	}
	for _, f := range compiled.ImportedFunctions() {
		mod, name, _ := f.Import()
		imports = append(imports, mod+"."+name)
	}
	return abis, imports, nil
}
