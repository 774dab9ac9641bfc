//! How a message crosses processes: written into a message body and read
//! back.

/// A message type that crosses processes: how it is written into a
/// message body and read back.
///
/// # Examples
///
/// ```
/// use priority_executor_amqp::Wire;
///
/// #[derive(Debug, PartialEq)]
/// struct Document(u32);
///
/// impl Wire for Document {
///     fn to_bytes(&self) -> Vec<u8> {
///         self.0.to_string().into_bytes()
///     }
///     fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
///         let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
///         text.parse().map(Document).map_err(|e| format!("{text:?}: {e}"))
///     }
/// }
/// assert_eq!(Document::from_bytes(&Document(7).to_bytes()), Ok(Document(7)));
/// assert!(Document::from_bytes(b"seven").is_err());
/// ```
pub trait Wire: Sized {
    /// The message body.
    fn to_bytes(&self) -> Vec<u8>;
    /// The value back from a body.
    ///
    /// # Errors
    ///
    /// Why the body is not one (the message is then dead-lettered with
    /// that reason).
    fn from_bytes(bytes: &[u8]) -> Result<Self, String>;
}

impl Wire for String {
    fn to_bytes(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
    fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        String::from_utf8(bytes.to_vec()).map_err(|e| format!("not UTF-8 text ({e})"))
    }
}

impl Wire for Vec<u8> {
    fn to_bytes(&self) -> Vec<u8> {
        self.clone()
    }
    fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        Ok(bytes.to_vec())
    }
}

impl Wire for () {
    fn to_bytes(&self) -> Vec<u8> {
        Vec::new()
    }
    fn from_bytes(_: &[u8]) -> Result<Self, String> {
        Ok(())
    }
}

macro_rules! wire_number {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            fn to_bytes(&self) -> Vec<u8> {
                self.to_string().into_bytes()
            }
            fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
                let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text ({e})"))?;
                text.trim()
                    .parse()
                    .map_err(|e| format!("{text:?} is not a {} ({e})", stringify!($t)))
            }
        }
    )*};
}
wire_number!(u8, u16, u32, u64, usize, i32, i64, f64);
