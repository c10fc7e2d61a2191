package extract_test

import (
	"fmt"

	"github.com/tidemark/tidemark/extract"
)

// Two states of one fact key alike and differ in their object, so the
// later one supersedes the earlier; a sentence with two values gets no key.
func ExampleKey() {
	for _, s := range []string{
		"The SESSION_TIMEOUT setting is 1800 seconds in config.py.",
		"The SESSION_TIMEOUT setting is 3600 seconds in config.py.",
		"The function fetch_user(uid) looks up a user record by primary key.",
		"The project pins numpy==1.26.4 in requirements.txt.",
		"The web tier listens on ports 80 and 443.",
	} {
		f, ok := extract.Key(s)
		if !ok {
			fmt.Println("no key")
			continue
		}
		fmt.Printf("%q %q %q\n", f.Subject, f.Relation, f.Object)
	}
	// Output:
	// "session timeout setting" "is in config py" "1800 seconds"
	// "session timeout setting" "is in config py" "3600 seconds"
	// "function" "looks up user record by primary key" "fetch_user(uid)"
	// "project" "pins numpy in requirements txt" "==1.26.4"
	// no key
}
