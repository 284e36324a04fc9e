//! The `socket` source: connects to `hostname`:`port` and reads lines until the peer closes
//! the connection (the documents' `nc -lk 9999` examples).

use std::io::BufReader;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use super::super::{ConnectorError, LineDecoder};
use super::filesystem::LineSplit;

pub fn connect(
    options: &[(String, String)],
    decoder: Box<dyn LineDecoder>,
) -> Result<LineSplit<BufReader<TcpStream>>, ConnectorError> {
    let get = |k: &str| {
        options
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let host = get("hostname").ok_or_else(|| {
        ConnectorError("option 'hostname' is required for connector 'socket'".into())
    })?;
    let port: u16 = get("port")
        .ok_or_else(|| ConnectorError("option 'port' is required for connector 'socket'".into()))?
        .parse()
        .map_err(|_| ConnectorError("invalid value for option 'port'".into()))?;
    let addr = (host, port)
        .to_socket_addrs()
        .map_err(|e| ConnectorError(format!("cannot resolve {host}:{port}: {e}")))?
        .next()
        .ok_or_else(|| ConnectorError(format!("cannot resolve {host}:{port}")))?;
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10))
        .map_err(|e| ConnectorError(format!("cannot connect to socket {host}:{port}: {e}")))?;
    Ok(LineSplit::new(
        BufReader::new(stream),
        decoder,
        format!("socket {host}:{port}"),
    ))
}
