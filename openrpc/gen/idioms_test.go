package gen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc/openrpc/gen"
)

// TestGoIdioms: generated Go spells Go's initialisms in capitals
// (GetPetByID, Pet.ID, HomepageURL, OwnerIDs), takes optional slices and
// maps as nil-able values (not *[]string), documents how a generated
// subscription ends, and builds (issue 39, point 3).
func TestGoIdioms(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("testdata", "golden", "petstore.json"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := gen.Go(doc, gen.Options{Package: "petstore"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	for _, want := range []string{
		"func (c *Client) GetPetByID(ctx context.Context, petID int64) (Pet, error)",
		"\tID          int64    `json:\"id\"`",
		"OwnerIDs    []string `json:\"ownerIds,omitzero\"`",
		"HomepageURL *string",
		"APIKey      *string",
		"FindPets(ctx context.Context, tags []string, labels map[string]string, limit *int64)",
		"UpdatePetURLs(ctx context.Context, petID int64, photoURLs []string)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("generated Go lacks %q", want)
		}
	}
	for _, bad := range []string{"*[]", "*map[", "GetPetById", "\tId ", "PetId", "HomepageUrl", "PhotoUrls", "OwnerIds"} {
		if strings.Contains(s, bad) {
			t.Errorf("generated Go has %q", bad)
		}
	}

	_, _, demoDoc := demoDocument(t)
	demoSrc, err := gen.Go(demoDoc, gen.Options{Package: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"// A range over the subscription's Events ends when the subscription does:",
		"// go-ethereum's protocol: stop after the events you expect",
		"func (c *Client) ToolsCall(ctx context.Context, name string, arguments json.RawMessage, meta json.RawMessage, inputResponses json.RawMessage, requestState *string) (ToolsCallResult, error)",
		"func (u ToolsCallResult) AsCallResult() (CallResult, error)",
		"func (u ToolsCallResult) AsInputRequiredResult() (InputRequiredResult, error)",
		"func (c *Client) RPCDiscover(",
	} {
		if !strings.Contains(string(demoSrc), want) {
			t.Errorf("the demo's generated Go lacks %q", want)
		}
	}

	if testing.Short() {
		return
	}
	dir := goModule(t)
	write(t, filepath.Join(dir, "petstore", "petstore.go"), src)
	goCmd(t, dir, "vet", "./petstore")
}
