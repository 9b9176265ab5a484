package diff_test

import (
	"fmt"

	"github.com/steady-go/steady/diff"
)

func ExampleParsePath() {
	p, err := diff.ParsePath(`.metadata.labels["app.kubernetes.io/name"]`)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(p), p[2].Name)
	fmt.Println(p)
	fmt.Println(p.HasPrefix(diff.MustParsePath(".metadata")))

	_, err = diff.ParsePath(".spec..replicas")
	fmt.Println(err)
	// Output:
	// 3 app.kubernetes.io/name
	// .metadata.labels["app.kubernetes.io/name"]
	// true
	// diff: invalid path ".spec..replicas" at offset 6: expected a field name after "."; names that are not identifiers are quoted: [".replicas"]
}

func ExamplePath_Key() {
	p := diff.Path{}.Field("spec").Field("ports").Key(
		diff.KeyField{Name: "port", Value: 80},
		diff.KeyField{Name: "protocol", Value: "TCP"},
	)
	fmt.Println(p)
	fmt.Println(diff.Path{}.Field("tags").Value("a"))
	fmt.Println(diff.Path{}.Field("args").Index(2))
	fmt.Println(diff.Path{})
	// Output:
	// .spec.ports[port=80,protocol="TCP"]
	// .tags[="a"]
	// .args[2]
	// .
}
