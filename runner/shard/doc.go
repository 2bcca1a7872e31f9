// Package shard is --shard: a sweep spread over several runalls, each running its share of
// the trials (trial k in file order, counting every parallel block's children, runs in shard
// k mod N), cut from the plan before the run starts so that the output, the results and
// Prometheus list the shard's tasks only.
package shard
