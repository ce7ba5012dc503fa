/** Implementation details of the JDBC store. Not an API: anything here may change in any release. */
package dev.idempotency.jdbc.internal;
