;; Like grow.wat, but its memory is imported (env.memory, no maximum) and it traps when growth fails.
(module
  (import "env" "memory" (memory 1))
  (func (export "_start")
    (loop $grow
      (if (i32.eq (memory.grow (i32.const 16)) (i32.const -1)) (then unreachable))
      (br $grow))))
