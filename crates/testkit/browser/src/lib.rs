//! Placeholder: replaced by the browser driver.
