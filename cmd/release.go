package cmd

// releaseVersion is the version a release build stamps in with
// -ldflags "-X github.com/mcpx-dev/mcpx/cmd.releaseVersion=1.2.3"
// (scripts/release does), so that a binary built without the module's
// version (a checkout, -buildvcs=false) still says which release it is.
var releaseVersion string
