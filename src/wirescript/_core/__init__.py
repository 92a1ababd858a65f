"""The sans-IO core: a neutral request in, a decision, an answer out; no HTTP library, no provider.

`ledger` holds a stub's state under its lock (the script's cursor, the records, the problems, the bill) and
drives one request in a straight line: `record` reads it, `cursor` decides which turn (or refusal) answers it,
`answer` renders that through the request's wire, `faults` and `signal` pace and cut the answer, `report`
words the problems, and `bill` prices what was answered.
"""
