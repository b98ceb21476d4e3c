;; Spins forever: only a kill of its runner ends it.
(module
  (memory (export "memory") 1)
  (func (export "_start") (loop $spin (br $spin))))
