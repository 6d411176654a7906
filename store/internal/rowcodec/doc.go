// Package rowcodec holds the column encodings the SQL run stores share
// (store/sqlite, store/postgres): times as Unix nanoseconds (0 or NULL for
// the zero time), JSON values as text (NULL for nil), an output over the
// store's byte cap replaced by a truncation marker, and the account of
// what of a damaged row could not be read (Unreadable), by position,
// never by content; and whole rows, a run and its steps encoded for a
// write and scanned back from a query (rows.go). Both stores write the
// same bytes for the same run, so a row reads back the same whichever
// store wrote it.
package rowcodec
