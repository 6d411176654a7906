// Package jmes is vmcp's JMESPath dialect: the jmespath-community library
// (the dialect with let) with vmcp's own function table, its checks of
// variable scopes, and its error wording. The checker (compile time) and
// the runtime (evaluation) both use it, so a query means the same thing,
// and fails with the same words, on both sides.
//
// In: an expression text, and at run time the value it searches. Out: the
// parsed tree, the result, or an *Error with the byte offset in the
// expression, what is wrong and how to fix it, in the workflow's terms
// (never the library's token names, never Go's runtime error text, never
// the searched value). A search's functions build at most the bytes its
// caller allows (the run's limits.maxResultBytes): a call past it fails,
// naming the function, before it builds. Entry points: Parse, Undefined,
// Unread, Search, Names.
package jmes
