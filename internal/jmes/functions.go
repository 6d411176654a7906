package jmes

// The function table. It is the library's default table with one
// change: contains() compares with JMESPath equality (the equality of ==,
// which compares arrays and objects by content). The library's own
// contains uses Go's ==, which panics ("comparing uncomparable type")
// when an element and the search are both arrays or both objects:
// contains(`[[1, 2]]`, `[1, 2]`) is true in JMESPath.
//
// Calls go through namedCaller, which puts the function's name on each of
// its errors ("abs(): ..."), and turns a panic inside a library function
// (the library trusts its own type check, and a few handlers assume more
// than it checks: reverse, map, sort_by, group_by and zip of a Go []string)
// into such an error rather than Go's runtime error text. Each call is
// also charged against the search's budget (limits.go), before it runs
// for the functions whose result can outgrow their arguments.

import (
	"errors"
	"sort"
	"strings"

	"github.com/jmespath-community/go-jmespath/pkg/functions"
	"github.com/jmespath-community/go-jmespath/pkg/interpreter"
	"github.com/jmespath-community/go-jmespath/pkg/util"
)

// table is the function table of every query; it is only read.
var table = buildTable()

// tableCaller calls table's functions for the library's interpreter; it
// is only read, so one serves every evaluation.
var tableCaller = interpreter.NewFunctionCaller(table...)

// Known reports whether a function call in a tree that Parse returned
// calls a function of the table, or one of vmcp's internal functions
// (guard.go).
func Known(name string) bool {
	if isGuard(name) {
		return true
	}
	_, ok := tableNames[name]
	return ok
}

// tableNames are the names of table's functions.
var tableNames = func() map[string]bool {
	m := make(map[string]bool, len(table))
	for _, f := range table {
		m[f.Name] = true
	}
	return m
}()

// Names returns the names of the functions a query may call, sorted.
func Names() []string {
	names := make([]string, 0, len(table))
	for _, f := range table {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	return names
}

func buildTable() []functions.FunctionEntry {
	fs := functions.GetDefaultFunctions()
	for i := range fs {
		if fs[i].Name == "contains" {
			fs[i].Handler = containsFunc
		}
	}
	return fs
}

// containsFunc is contains(subject, search): for a string subject,
// whether search is a string inside it; for an array, whether an element
// equals search by JMESPath equality. The library's type check has
// already made subject an array or a string.
func containsFunc(args []any) (any, error) {
	if s, ok := args[0].(string); ok {
		sub, isStr := args[1].(string)
		return isStr && strings.Contains(s, sub), nil
	}
	arr, ok := args[0].([]any)
	if !ok {
		return nil, errors.New("the first argument must be an array or a string")
	}
	for _, e := range arr {
		if util.ObjsEqual(e, args[1]) {
			return true, nil
		}
	}
	return false, nil
}

// namedCaller calls a function of the table within one search's budget;
// its errors name the function (see the file comment).
type namedCaller struct {
	inner  interpreter.FunctionCaller
	budget *budget
}

func (c namedCaller) CallFunction(name string, args []any) (out any, err error) {
	if isGuard(name) {
		return callGuard(c.budget, name, args)
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, errFunctionPanic(name)
		}
	}()
	if check, ok := sizeChecks[name]; ok {
		n, e, typed := check(args, c.budget.limit)
		if e != nil {
			return nil, c.budget.fail(e)
		}
		if typed {
			if e := c.budget.charge(name+"()", n); e != nil {
				return nil, e
			}
		}
	}
	out, err = c.inner.CallFunction(name, args)
	if err != nil {
		return nil, functionError(name, err)
	}
	if measured[name] {
		if e := c.budget.charge(name+"()", builtSize(name, out)); e != nil {
			return nil, e
		}
	}
	return out, nil
}
