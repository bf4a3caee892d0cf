// Command argocd-lua runs one Argo CD resource customization script the way Argo CD's controller
// does (util/lua/lua.go in argoproj/argo-cd): standard libraries closed except package, base, table
// and the time/date subset of os; the live object bound to the global `obj` as a Lua table; a one
// second deadline; the script's return value encoded to JSON by layeh.com/gopher-json.
//
// Usage: argocd-lua health|discovery|action SCRIPT OBJECT.json
// It prints the returned table as JSON. For health it also refuses a status Argo CD would not accept.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	lua "github.com/yuin/gopher-lua"
	luajson "layeh.com/gopher-json"
)

var healthCodes = map[string]bool{
	"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true,
}

func main() {
	if len(os.Args) != 4 {
		fail("usage: argocd-lua health|discovery|action SCRIPT OBJECT.json")
	}
	mode, scriptPath, objectPath := os.Args[1], os.Args[2], os.Args[3]
	script, err := os.ReadFile(scriptPath)
	if err != nil {
		fail(err.Error())
	}
	raw, err := os.ReadFile(objectPath)
	if err != nil {
		fail(err.Error())
	}
	// Unstructured objects decode numbers as int64 or float64; both become Lua numbers below.
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		fail(fmt.Sprintf("%s: %v", objectPath, err))
	}
	out, err := run(string(script), obj)
	if err != nil {
		fail(err.Error())
	}
	if mode == "health" {
		var hs struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(out, &hs); err != nil {
			fail(fmt.Sprintf("health script returned %s, not a table with status", out))
		}
		if !healthCodes[hs.Status] {
			fail(fmt.Sprintf("health script returned status %q, which Argo CD replaces with Unknown", hs.Status))
		}
	}
	os.Stdout.Write(out)
	os.Stdout.Write([]byte("\n"))
}

func run(script string, obj map[string]any) ([]byte, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			return nil, err
		}
	}
	openSafeOs(l)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("actionParams", l.CreateTable(0, 0))
	l.SetGlobal("obj", decodeValue(l, obj))
	fn, err := l.LoadString(script)
	if err != nil {
		return nil, err
	}
	l.Push(fn)
	if err := l.PCall(0, lua.MultRet, nil); err != nil {
		return nil, err
	}
	ret := l.Get(-1)
	if ret.Type() != lua.LTTable {
		return nil, fmt.Errorf("expect table output from Lua script, not %s", ret.Type())
	}
	return luajson.Encode(ret)
}

// openSafeOs exposes os.time and os.date only, as Argo CD's oslib_safe.go does: the functions are
// gopher-lua's own, taken from its os library before the rest of that library is dropped.
func openSafeOs(l *lua.LState) {
	scratch := lua.NewState()
	defer scratch.Close()
	full := scratch.GetGlobal(lua.OsLibName).(*lua.LTable)
	safe := l.NewTable()
	for _, name := range []string{"time", "date"} {
		fn := full.RawGetString(name).(*lua.LFunction)
		safe.RawSetString(name, l.NewFunction(fn.GFunction))
	}
	l.SetGlobal(lua.OsLibName, safe)
	l.PreloadModule(lua.OsLibName, func(l *lua.LState) int {
		l.Push(safe)
		return 1
	})
}

// decodeValue is Argo CD's conversion of an unstructured object into Lua values.
func decodeValue(l *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case json.Number:
		return lua.LString(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case []any:
		arr := l.CreateTable(len(v), 0)
		for _, item := range v {
			arr.Append(decodeValue(l, item))
		}
		return arr
	case map[string]any:
		tbl := l.CreateTable(0, len(v))
		for key, item := range v {
			tbl.RawSetH(lua.LString(key), decodeValue(l, item))
		}
		return tbl
	}
	return lua.LNil
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "argocd-lua:", msg)
	os.Exit(1)
}
