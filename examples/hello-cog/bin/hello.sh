#!/bin/sh
# hello-cog: prints one greeting line with its config and node id, then exits.
# The native runtime passes config as HEDDLE_CONFIG_* variables and the node id as HEDDLE_NODE_ID.
greeting="${HEDDLE_CONFIG_GREETING:-hello}"
echo "${greeting} from hello-cog on node ${HEDDLE_NODE_ID:-unknown}"
