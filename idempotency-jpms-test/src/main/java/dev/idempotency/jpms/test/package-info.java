/** The module-path check: one program that runs the library as a named user module would. */
package dev.idempotency.jpms.test;
