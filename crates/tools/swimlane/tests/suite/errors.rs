//! Bad input gives a clear error naming the file and the place.
