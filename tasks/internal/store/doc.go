// Package store is the durable state shared by the processes of slim's
// background task tools: per scope (a project directory and a server), a
// live JSON document every transaction reads and an archive of settled
// jobs and tombstones read only when asked for (archive.go), a lock held
// only for each transaction, and the lease and journal rules that stand
// in for a single process's exclusion.
//
// Every tool call is its own process, so every check-and-change that one
// long-running process would do without interruption becomes one Update:
// read the state, check, change, write back what changed, all under the
// lock.
// Network I/O never happens inside a transaction. A remote write follows
// three steps:
//
//  1. capture: in one transaction, check the records, acquire the task's
//     lease (AcquireLease, a compare-and-set: at most one lease per task)
//     and journal the write as prepared (AddOp);
//  2. just before sending, in one transaction, check the records again and
//     mark the write sent_unknown (MarkSent), then send outside the lock;
//  3. commit: in one transaction, check that the lease is still the
//     holder's (ValidateLease) and the run unchanged, then apply the
//     outcome (AdvanceOp) and release the lease (ReleaseLease).
//
// A crash at any point leaves evidence rather than a guess: a prepared op
// proves nothing was sent, while sent_unknown means the write may have
// been admitted. Leases and ops never expire by time. A later process
// that finds the owner of a lease dead (owner.Alive: pid, start time and
// boot id) settles what needs no evidence with ReapDeadOwners and leaves
// the rest orphaned for evidence or an operator.
//
// A document that cannot be used (it does not decode, has another schema
// version, is not a regular file, is over the size bound) is an error and
// is never read as empty or overwritten: the caller fails closed.
package store
