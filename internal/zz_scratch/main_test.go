package zz

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jmespath-community/go-jmespath"
)

func TestScratch(t *testing.T) {
	var data any
	json.Unmarshal([]byte(`{"a": {"items": [{"f": true, "n": "x", "tags": ["b","a"]}, {"f": false, "n": "y", "tags": ["c"]}]}, "items": [{"name": "b", "owner": "o1", "tags": ["z","y"]}, {"name": "a", "owner": "o1", "tags": ["x"]}], "ns": "prod"}`), &data)
	for _, e := range []string{
		"a.items[][?f]", "a.items[?f].n", "a.items[] | [?f].n",
		"items[].tags | sort(@[])", "items[].let $n = name in tags | sort(@)", "items[].tags[] | sort(@)",
		"let $o = 'o1' in items[?owner == $o].name | sort(@)",
		"[let $o = 'o1' in items[?owner == $o].name, ns]",
		"let $ns = ns in items[].join('/', [$ns, name])",
		"items[].join('/', [name, owner])",
		"items[].[name, owner] | map(&join(':', @), @)",
		"to_string(`1`)", "join(',', items[].to_string(@.tags))",
		"items(a)", "from_items([['k', `1`]])", "`Pod`",
	} {
		r, err := jmespath.Search(e, data)
		b, _ := json.Marshal(r)
		fmt.Printf("%-50s => %s  err=%v\n", e, b, err)
	}
}

func TestScratch2(t *testing.T) {
	var data any
	json.Unmarshal([]byte(`{"items": [{"name": "b", "tags": ["z","y"]}, {"name": "a", "tags": ["x"]}]}`), &data)
	for _, e := range []string{
		"items[].let $n = name in tags[].{item: $n, tag: @} | [0]",
		"(items[].let $n = name in tags[].{item: $n, tag: @})[] | [0]",
		"items[].(let $n = name in tags[].{item: $n, tag: @})[] | [0]",
		"items[].let $n = name in tags[].{item: $n, tag: @}[] | [0]",
	} {
		r, err := jmespath.Search(e, data)
		b, _ := json.Marshal(r)
		fmt.Printf("%-50s => %s  err=%v\n", e, b, err)
	}
}
