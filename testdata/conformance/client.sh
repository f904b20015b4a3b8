#!/bin/sh
# mcpx as a client under the MCP conformance suite
# (@modelcontextprotocol/conformance): the suite runs this command with the
# scenario's server URL as the last argument and the scenario's name in
# $MCP_CONFORMANCE_SCENARIO. $MCPX is the mcpx binary (default: mcpx).
#
#   node .../conformance/dist/index.js client \
#     --command "testdata/conformance/client.sh" \
#     --scenario elicitation-sep1034-client-defaults
set -eu
for last; do :; done
url=${last:?the conformance suite passes the server URL}
mcpx=${MCPX:-mcpx}
case "${MCP_CONFORMANCE_SCENARIO:-}" in
elicitation-sep1034-client-defaults)
	# SEP-1034: accept the elicitation with every schema default applied.
	exec "$mcpx" tools call test_client_elicitation_defaults --on-elicit accept-defaults --url "$url"
	;;
*)
	echo "mcpx conformance adapter: scenario '${MCP_CONFORMANCE_SCENARIO:-}' is not wired up" >&2
	exit 2
	;;
esac
