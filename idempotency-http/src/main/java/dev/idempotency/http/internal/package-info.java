/** Implementation details of the HTTP module. Not an API: anything here may change in any release. */
package dev.idempotency.http.internal;
