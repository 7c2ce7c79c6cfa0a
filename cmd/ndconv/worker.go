package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv/job"
)

// newWorkerCommand is ndconv worker: one array-job task of a plan.
func newWorkerCommand() *cobra.Command {
	var (
		planLoc      string
		index, count int
		quiet        bool
		cpuProfile   string
	)
	cmd := &cobra.Command{
		Use:   "worker --plan PLAN [--index I --count N]",
		Short: "Compute one worker's share of a plan's blocks (ndconv plan)",
		Long: `Computes the I-th of N shares of the blocks (compact regions: runs in Z order) of the plan PLAN (a path or a bucket URL,
as ndconv plan wrote it) and writes each whole into the plan's output, skipping
those stored whole already: a worker killed at any point and run again loses
and duplicates nothing, and writes the same bytes. The index is --index, else
JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (less
SLURM_ARRAY_TASK_MIN); the count is --count, else SLURM_ARRAY_TASK_COUNT. An
output that another plan created is refused. The temporary files that a
killed writer left beside the shards of its blocks are removed (those of a
writer of this host that no longer runs, and any an hour old).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			begin := time.Now()
			if planLoc == "" {
				return usagef("worker: give --plan PLAN, the plan ndconv plan wrote")
			}
			i, n, err := workerShare(cmd.Flags().Changed("index"), index, cmd.Flags().Changed("count"), count)
			if err != nil {
				return err
			}
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			ctx := cmd.Context()
			spec, err := job.Load(ctx, planLoc)
			if err != nil {
				return err
			}
			trace("plan loaded")
			stats := &job.Stats{}
			inFlight := blocksInFlight(1)
			r, err := spec.OpenWith(ctx, job.RunOptions{InFlight: inFlight, CacheBytes: streamSetting("NDCONV_BLOCK_CACHE", job.DefaultCacheBytes), Stats: stats})
			if err != nil {
				return err
			}
			defer r.Close()
			limitMemory(spec, inFlight, r.Cache())
			setWorkerGC()
			trace("opened")
			if err := r.RunShare(ctx, i, n); err != nil {
				return err
			}
			trace("blocks done")
			if c := r.Cache(); c != nil {
				trace(fmt.Sprintf("%d chunks decoded (%d in the array), %d reads from the cache; read+decode %.2f s, compute %.2f s, encode+write %.2f s (summed over the blocks in flight)",
					c.Decoded(), c.Chunks(), c.Hits(), seconds(stats.Read.Load()), seconds(stats.Compute.Load()), seconds(stats.Write.Load())))
			}
			if !quiet {
				share := (i+1)*spec.Blocks()/n - i*spec.Blocks()/n
				stale := ""
				if k := stats.Stale.Load(); k > 0 {
					stale = fmt.Sprintf("; %d temporary files of dead writers removed", k)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "worker %d of %d: %d of its %d blocks computed, %d stored already (plan %s, %d blocks)%s; %.1f ms\n",
					i, n, stats.Written.Load(), max(share, 0), stats.Skipped.Load(), planLoc, spec.Blocks(), stale, ms(time.Since(begin)))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&planLoc, "plan", "", "the plan: a path or a bucket URL")
	fl.IntVar(&index, "index", 0, "this worker's index, 0 ≤ I < N (default: JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID)")
	fl.IntVar(&count, "count", 0, "the number of workers N (default: SLURM_ARRAY_TASK_COUNT)")
	fl.BoolVarP(&quiet, "quiet", "q", false, "print nothing on success")
	fl.StringVar(&cpuProfile, "cpuprofile", "", "write this worker's CPU profile (go tool pprof) to FILE")
	return cmd
}

// workerShare is a worker's index and count: the flags given, else the
// array job's environment.
func workerShare(hasIndex bool, index int, hasCount bool, count int) (int, int, error) {
	env := func(name string) (int, bool, error) {
		v, ok := os.LookupEnv(name)
		if !ok || v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, false, usagef("worker: %s=%q is not an integer", name, v)
		}
		return n, true, nil
	}
	if !hasIndex {
		var ok bool
		var err error
		for _, name := range []string{"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"} {
			if index, ok, err = env(name); err != nil {
				return 0, 0, err
			} else if ok {
				if name == "SLURM_ARRAY_TASK_ID" {
					lo, _, err := env("SLURM_ARRAY_TASK_MIN")
					if err != nil {
						return 0, 0, err
					}
					index -= lo
				}
				break
			}
		}
		if !ok {
			return 0, 0, usagef("worker: no index: give --index I, or run as a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) or a Slurm array task (SLURM_ARRAY_TASK_ID)")
		}
	}
	if !hasCount {
		n, ok, err := env("SLURM_ARRAY_TASK_COUNT")
		if err != nil {
			return 0, 0, err
		}
		if !ok {
			return 0, 0, usagef("worker: no count: give --count N, the number of workers (or run as a Slurm array task: SLURM_ARRAY_TASK_COUNT)")
		}
		count = n
	}
	if count < 1 || index < 0 || index >= count {
		return 0, 0, usagef("worker: index %d of %d workers: want 0 ≤ index < count", index, count)
	}
	return index, count, nil
}

// newStatusCommand is ndconv status: a plan's blocks done, from what its
// output stores.
func newStatusCommand() *cobra.Command {
	var planLoc string
	cmd := &cobra.Command{
		Use:   "status --plan PLAN",
		Short: "Count the blocks of a plan stored whole in its output",
		Long: `Prints DONE/TOTAL: the blocks of the plan PLAN whose shards are all stored in
its output, whoever stored them (workers, a Beam pipeline, Dask), read from
the output itself. The exit status is 0 whether or not all are done.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if planLoc == "" {
				return usagef("status: give --plan PLAN, the plan ndconv plan wrote")
			}
			spec, err := job.Load(cmd.Context(), planLoc)
			if err != nil {
				return err
			}
			done, total, err := job.Status(cmd.Context(), spec)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d/%d blocks done\n", done, total)
			return nil
		},
	}
	cmd.Flags().StringVar(&planLoc, "plan", "", "the plan: a path or a bucket URL")
	return cmd
}

// startCPUProfile starts writing the process's CPU profile to path, and
// returns what stops it.
func startCPUProfile(path string) (func(), error) {
	return startRecording(path, pprof.StartCPUProfile, pprof.StopCPUProfile)
}
