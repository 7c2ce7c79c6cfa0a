package zarr

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHelperHangingPut is not a test: run by TestRemoveStale as a process
// of its own (ZARR_TEST_HANG_PUT names a store's folder), it Puts a key
// and stops before the rename, saying so on stdout, until it is killed.
func TestHelperHangingPut(t *testing.T) {
	root := os.Getenv("ZARR_TEST_HANG_PUT")
	if root == "" {
		t.Skip("a helper process of TestRemoveStale")
	}
	beforeRename = func(tmp string) {
		fmt.Println("written", tmp)
		select {}
	}
	NewDirStore(root).Put(context.Background(), os.Getenv("ZARR_TEST_HANG_KEY"), []byte("half a shard"))
}

// hangingPut starts a process that Puts key into the store at root and
// stops before its rename, and returns it with its temporary file.
func hangingPut(t *testing.T, root, key string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHangingPut$")
	cmd.Env = append(os.Environ(), "ZARR_TEST_HANG_PUT="+root, "ZARR_TEST_HANG_KEY="+key)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	tmp, ok := strings.CutPrefix(strings.TrimSpace(line), "written ")
	if err != nil || !ok {
		t.Fatalf("the helper said %q: %v", line, err)
	}
	return cmd, tmp
}

// TestRemoveStale: a writer killed (SIGKILL) between writing its
// temporary file and renaming it leaves the file; RemoveStale removes it,
// and keeps the file of a writer that still runs (whose rename must
// land), those of other hosts and of versions that did not name their
// writer while they are recent, and removes those once older than
// StaleAfter. Files of keys not asked for are left alone.
func TestRemoveStale(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s := NewDirStore(root)
	dead, deadTmp := hangingPut(t, root, "c/0/1")
	dead.Process.Kill()
	dead.Wait()
	_, liveTmp := hangingPut(t, root, "c/0/2")
	_, otherTmp := hangingPut(t, root, "c/1/0") // killed below, but not asked for
	dir := filepath.Join(root, "c", "0")
	plant := func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
		return p
	}
	foreignNew := plant(".3-4242@elsewhere-123", time.Minute)
	foreignOld := plant(".3-4242@elsewhere-456", 2*StaleAfter)
	oldStyleNew := plant(".4-789", time.Minute)
	oldStyleOld := plant(".4-790", 2*StaleAfter)
	if err := s.Put(ctx, "c/0/5", []byte("stored")); err != nil {
		t.Fatal(err)
	}
	n, err := s.RemoveStale(ctx, []string{"c/0/1", "c/0/2", "c/0/3", "c/0/4", "c/0/5", "c/7/7"})
	if err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	for _, c := range []struct {
		path string
		keep bool
		what string
	}{
		{deadTmp, false, "a killed writer's"},
		{liveTmp, true, "a live writer's"},
		{otherTmp, true, "a key not asked for"},
		{foreignNew, true, "another host's, recent"},
		{foreignOld, false, "another host's, old"},
		{oldStyleNew, true, "an unnamed writer's, recent"},
		{oldStyleOld, false, "an unnamed writer's, old"},
		{filepath.Join(dir, "5"), true, "a stored value"},
	} {
		if exists(c.path) != c.keep {
			t.Errorf("%s file %s: kept %v, want %v", c.what, filepath.Base(c.path), !c.keep, c.keep)
		}
	}
	if n != 3 {
		t.Errorf("RemoveStale removed %d files, want 3", n)
	}
	if keys, err := s.List(ctx, ""); err != nil || strings.Join(keys, " ") != "c/0/5" {
		t.Errorf("List: %v, %v; want only c/0/5", keys, err)
	}
}
