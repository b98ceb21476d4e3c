;; Grows its memory (declared without a maximum) 16 pages at a time until memory.grow fails,
;; then prints "grow-failed" and exits 3.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "grow-failed\n")
  (func (export "_start")
    (block $failed
      (loop $grow
        (br_if $failed (i32.eq (memory.grow (i32.const 16)) (i32.const -1)))
        (br $grow)))
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 12))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
    (call $proc_exit (i32.const 3))))
