CREATE TABLE contact (
	clientid VARCHAR, 
	confirmed VARCHAR, 
	customfields JSON, 
	email VARCHAR, 
	fullname VARCHAR, 
	ip VARCHAR, 
	lang VARCHAR, 
	listid VARCHAR, 
	status INTEGER, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE contact_list (
	clientid VARCHAR, 
	customfields JSON, 
	eventcustomizations JSON, 
	name VARCHAR, 
	id VARCHAR NOT NULL, 
	created VARCHAR, 
	PRIMARY KEY (id)
);

