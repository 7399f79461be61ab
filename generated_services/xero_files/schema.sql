CREATE TABLE association (
	"FileId" VARCHAR, 
	"ObjectGroup" VARCHAR, 
	"ObjectType" VARCHAR, 
	"ObjectId" VARCHAR NOT NULL, 
	PRIMARY KEY ("ObjectId")
);

CREATE TABLE file (
	"CreatedDateUtc" VARCHAR, 
	"FolderId" VARCHAR, 
	"MimeType" VARCHAR, 
	"Name" VARCHAR, 
	"Size" INTEGER, 
	"UpdatedDateUtc" VARCHAR, 
	"User" JSON, 
	body VARCHAR, 
	filename VARCHAR, 
	"Id" VARCHAR NOT NULL, 
	PRIMARY KEY ("Id")
);

CREATE TABLE folder (
	"Email" VARCHAR, 
	"FileCount" INTEGER, 
	"IsInbox" BOOLEAN, 
	"Name" VARCHAR, 
	"Id" VARCHAR NOT NULL, 
	PRIMARY KEY ("Id")
);

CREATE TABLE inbox (
	"Email" VARCHAR, 
	"FileCount" INTEGER, 
	"IsInbox" BOOLEAN, 
	"Name" VARCHAR, 
	"Id" VARCHAR NOT NULL, 
	PRIMARY KEY ("Id")
);

