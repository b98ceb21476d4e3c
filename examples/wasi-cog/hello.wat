;; wasi-cog: the Heddle WASI example. Prints one JSON line on stdout:
;;   {"cog":"wasi-cog","node":"<HEDDLE_NODE_ID>","mode":"once|interval|console|listener"}
;; and exits 0. With --once (or --interval N, where the host reruns it) it prints once and exits;
;; with --console <command> it answers the console command the same way.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $env_sizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_get" (func $env_get (param i32 i32) (result i32)))
  (memory (export "memory") 1 2)
  ;; 0..16 iovec and counters, 64.. text, 1024.. argv/env pointers, 4096.. argv/env strings, 12288.. output
  (data (i32.const 64) "{\"cog\":\"wasi-cog\",\"node\":\"")          ;; 26 bytes
  (data (i32.const 96) "\",\"mode\":\"")                           ;; 10 bytes
  (data (i32.const 112) "\"}\n")                                   ;; 3 bytes
  (data (i32.const 128) "HEDDLE_NODE_ID=")                         ;; 15 bytes
  (data (i32.const 144) "--once")                                  ;; 6
  (data (i32.const 152) "--interval")                              ;; 10
  (data (i32.const 164) "--console")                               ;; 9
  (data (i32.const 176) "once")                                    ;; 4
  (data (i32.const 184) "interval")                                ;; 8
  (data (i32.const 196) "console")                                 ;; 7
  (data (i32.const 204) "listener")                                ;; 8
  (data (i32.const 212) "unknown")                                 ;; 7

  ;; strlen of a NUL-terminated string
  (func $strlen (param $p i32) (result i32)
    (local $n i32)
    (block $end (loop $next
      (br_if $end (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br $next)))
    (local.get $n))
  ;; does the NUL-terminated string at $s start with $len bytes at $lit (and, if $exact, end there)?
  (func $matches (param $s i32) (param $lit i32) (param $len i32) (param $exact i32) (result i32)
    (local $i i32)
    (block $no (loop $next
      (if (i32.ge_u (local.get $i) (local.get $len))
        (then (return (if (result i32) (local.get $exact)
          (then (i32.eqz (i32.load8_u (i32.add (local.get $s) (local.get $i)))))
          (else (i32.const 1))))))
      (br_if $no (i32.ne (i32.load8_u (i32.add (local.get $s) (local.get $i)))
                         (i32.load8_u (i32.add (local.get $lit) (local.get $i)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (i32.const 0))
  ;; append $len bytes from $src at output cursor $out; returns the new cursor
  (func $append (param $out i32) (param $src i32) (param $len i32) (result i32)
    (memory.copy (local.get $out) (local.get $src) (local.get $len))
    (i32.add (local.get $out) (local.get $len)))

  (func (export "_start")
    (local $i i32) (local $n i32) (local $p i32) (local $out i32)
    (local $mode i32) (local $modelen i32) (local $node i32) (local $nodelen i32)
    (local.set $mode (i32.const 204)) (local.set $modelen (i32.const 8))
    (local.set $node (i32.const 212)) (local.set $nodelen (i32.const 7))
    ;; argv: pick the run mode
    (drop (call $args_sizes (i32.const 8) (i32.const 12)))
    (drop (call $args_get (i32.const 1024) (i32.const 4096)))
    (local.set $n (i32.load (i32.const 8)))
    (local.set $i (i32.const 1))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $p (i32.load (i32.add (i32.const 1024) (i32.shl (local.get $i) (i32.const 2)))))
      (if (call $matches (local.get $p) (i32.const 144) (i32.const 6) (i32.const 1))
        (then (local.set $mode (i32.const 176)) (local.set $modelen (i32.const 4))))
      (if (call $matches (local.get $p) (i32.const 152) (i32.const 10) (i32.const 1))
        (then (local.set $mode (i32.const 184)) (local.set $modelen (i32.const 8))))
      (if (call $matches (local.get $p) (i32.const 164) (i32.const 9) (i32.const 1))
        (then (local.set $mode (i32.const 196)) (local.set $modelen (i32.const 7))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    ;; environment: find HEDDLE_NODE_ID (the guest sees only the host contract)
    (drop (call $env_sizes (i32.const 8) (i32.const 12)))
    (drop (call $env_get (i32.const 1024) (i32.const 4096)))
    (local.set $n (i32.load (i32.const 8)))
    (local.set $i (i32.const 0))
    (block $found (loop $next
      (br_if $found (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $p (i32.load (i32.add (i32.const 1024) (i32.shl (local.get $i) (i32.const 2)))))
      (if (call $matches (local.get $p) (i32.const 128) (i32.const 15) (i32.const 0))
        (then
          (local.set $node (i32.add (local.get $p) (i32.const 15)))
          (local.set $nodelen (call $strlen (local.get $node)))
          (br $found)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    ;; the node id is a host-given string: cap it (node ids are short and JSON-safe by contract)
    (if (i32.gt_u (local.get $nodelen) (i32.const 256)) (then (local.set $nodelen (i32.const 256))))
    (local.set $out (i32.const 12288))
    (local.set $out (call $append (local.get $out) (i32.const 64) (i32.const 26)))
    (local.set $out (call $append (local.get $out) (local.get $node) (local.get $nodelen)))
    (local.set $out (call $append (local.get $out) (i32.const 96) (i32.const 10)))
    (local.set $out (call $append (local.get $out) (local.get $mode) (local.get $modelen)))
    (local.set $out (call $append (local.get $out) (i32.const 112) (i32.const 3)))
    (i32.store (i32.const 0) (i32.const 12288))
    (i32.store (i32.const 4) (i32.sub (local.get $out) (i32.const 12288)))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))
