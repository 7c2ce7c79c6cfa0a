package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv"
)

func newDevicesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "devices",
		Short: "List the backends and devices ndconv can use",
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			for _, b := range ndconv.Devices() {
				if b.Unavailable != "" {
					fmt.Fprintf(w, "%-8s %s\n", b.Name, b.Unavailable)
					continue
				}
				for _, d := range b.Devices {
					fmt.Fprintf(w, "%-8s %s\n", d.Device, d.Summary)
					fmt.Fprintf(w, "         %s\n", d.Detail)
				}
			}
			return nil
		},
	}
}
