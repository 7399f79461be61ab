CREATE TABLE task (
	completed VARCHAR, 
	deleted BOOLEAN, 
	due VARCHAR, 
	etag VARCHAR, 
	hidden BOOLEAN, 
	kind VARCHAR, 
	links JSON, 
	notes VARCHAR, 
	parent VARCHAR, 
	position VARCHAR, 
	"selfLink" VARCHAR, 
	status VARCHAR, 
	title VARCHAR, 
	task_list_id VARCHAR, 
	id VARCHAR NOT NULL, 
	updated VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE task_list (
	etag VARCHAR, 
	kind VARCHAR, 
	"selfLink" VARCHAR, 
	title VARCHAR, 
	id VARCHAR NOT NULL, 
	updated VARCHAR, 
	PRIMARY KEY (id)
);

